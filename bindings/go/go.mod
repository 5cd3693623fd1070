module github.com/libztensor/libztensor/bindings/go

go 1.19
