module portcullis.test/differential

go 1.19
