module portcullis.test/doors

go 1.19
