module portcullis.test/readings

go 1.19
