package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

// version overrides the version the build recorded:
// go build -ldflags "-X main.version=v1.2.3" ./cmd/memsync.
var version string

// buildInfo is the version memsync reports (version, --version, the MCP
// server): the build's, with version in place of its version when set.
func buildInfo() memsync.BuildInfo {
	b := memsync.Build()
	if version != "" {
		b.Version = version
	}
	return b
}

func versionCommand() command {
	return command{name: "version", usage: "print memsync's version, the commit it was built from and the Go release",
		args: noArgs("version"), opens: noMemory, run: runVersion}
}

func runVersion(s *session, _ *cli.Context) error {
	b := buildInfo()
	return s.print(b, nil, func() {
		s.printf("memsync %s", b.Version)
		if b.Commit != "" {
			modified := ""
			if b.Modified {
				modified = ", modified"
			}
			s.printf(" (commit %s%s)", b.Commit, modified)
		}
		s.printf(" %s\n", b.GoVersion)
	})
}
