module github.com/inferbench/inferbench

go 1.26.8
