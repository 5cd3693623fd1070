package ztensor

// What the external tests (package ztensor_test) may call besides the API:
// compiled only into `go test` binaries.

// BenchCLoop: the library's own per-call cost, for bench_test.go.
var BenchCLoop = benchCLoop
