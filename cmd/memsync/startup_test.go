package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Start-up budgets of the release binary (CGO_ENABLED=0, -tags
// urfave_cli_no_docs), counted in allocations of package init code, which
// do not depend on the machine's load: every memsync command and every git
// hook pays them before main runs. Measured when set: 2,065 allocations,
// 274 KB in all, 36 allocations and 3.5 KB outside internal/recall in
// memsync's own packages.
const (
	initAllocBudget    = 2600
	initBytesBudget    = 340 << 10
	ownInitAllocBudget = 60 // memsync's own packages, internal/recall aside
)

// initDenied are packages that must not be in the binary at all: urfave/cli's
// man page and markdown generator.
var initDenied = []string{"github.com/russross/blackfriday", "github.com/cpuguy83/go-md2man"}

// initLine is one line of GODEBUG=inittrace=1: the package, its bytes and
// allocations.
var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestStartupInitBudget runs the release binary with GODEBUG=inittrace=1 and
// fails when package init allocates past the budgets or a denied package
// initialises: start-up grew.
func TestStartupInitBudget(t *testing.T) {
	bin := memsyncBinary(t)
	env := append(testGitEnv(t), "GODEBUG=inittrace=1")
	cmd := exec.Command(bin, "version")
	cmd.Env, cmd.Dir = env, t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("memsync version: %v\n%s", err, stderr.String())
	}
	var n, allocs, size, ownAllocs int
	for line := range strings.Lines(stderr.String()) {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		n++
		b, _ := strconv.Atoi(m[2])
		a, _ := strconv.Atoi(m[3])
		size += b
		allocs += a
		pkg, _ := strings.CutPrefix(m[1], "github.com/memsync/memsync")
		if pkg != m[1] && pkg != "/internal/recall" || m[1] == "main" {
			ownAllocs += a
		}
		for _, d := range initDenied {
			if strings.HasPrefix(m[1], d) {
				t.Errorf("%s initialises at start-up: build with -tags urfave_cli_no_docs, keep it out of the binary", m[1])
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d init lines in GODEBUG=inittrace=1's output:\n%s", n, stderr.String())
	}
	t.Logf("%d packages initialise: %d allocations, %d bytes; memsync's own (internal/recall aside): %d allocations", n, allocs, size, ownAllocs)
	if allocs > initAllocBudget || size > initBytesBudget {
		t.Errorf("package init allocates %d times, %d bytes: past the budget of %d, %d bytes. Build package-level tables lazily (sync.OnceValue) or keep the import off the binary", allocs, size, initAllocBudget, initBytesBudget)
	}
	if ownAllocs > ownInitAllocBudget {
		t.Errorf("memsync's own packages allocate %d times in init, past %d: build package-level regexps, maps and tables lazily (sync.OnceValue)", ownAllocs, ownInitAllocBudget)
	}
}
