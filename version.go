package memsync

import (
	"runtime"
	"runtime/debug"
)

// modulePath is memsync's module, looked up among a program's dependencies
// when memsync is a library of another module.
const modulePath = "github.com/memsync/memsync"

// BuildInfo is what this copy of memsync was built from, as the Go toolchain
// recorded it in the binary.
type BuildInfo struct {
	// Version is the module version ("v1.2.0", or a pseudo-version such as
	// "v0.0.0-20260101120000-abcdef123456+dirty"), or "dev" when the build
	// recorded none (go run, go test).
	Version string `json:"version"`
	// Commit is the git revision built (vcs.revision), when known.
	Commit string `json:"commit,omitempty"`
	// Modified: the worktree had uncommitted changes (vcs.modified).
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the Go release that built the binary.
	GoVersion string `json:"go_version"`
}

// Build reads the build information of the running binary.
func Build() BuildInfo {
	b := BuildInfo{Version: "dev", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	mod := &info.Main
	if mod.Path != modulePath {
		for _, d := range info.Deps {
			if d.Path == modulePath {
				mod = d
			}
		}
	}
	if v := mod.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	if mod != &info.Main { // the settings below are of the main module's worktree
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// Version is the version of memsync that is running: Build().Version.
func Version() string { return Build().Version }
