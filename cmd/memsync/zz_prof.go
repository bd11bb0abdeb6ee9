package main

import (
	"os"
	"runtime/pprof"
)

func init() {
	if p := os.Getenv("MEMSYNC_CPUPROFILE"); p != "" {
		f, _ := os.Create(p)
		_ = pprof.StartCPUProfile(f)
		profStop = func() { pprof.StopCPUProfile(); _ = f.Close() }
	}
}

var profStop = func() {}
