module ztensor

go 1.19
