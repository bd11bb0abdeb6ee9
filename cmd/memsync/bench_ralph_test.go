package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// BenchmarkRalphAdd1MB times one add to a 1 MB ralph-dialect memory as a
// whole process, side by side: ralph's own add (which rewrites the whole
// file), memsync's add where the file's last section is the entry's (an
// append; after ralph's write and after memsync's own) and where it is not
// (one atomic rewrite). Needs ralph (see
// ralphBinary).
func BenchmarkRalphAdd1MB(b *testing.B) {
	ralph := ralphBinary(b)
	env := append(testGitEnv(b), "MEMSYNC_GLOBAL_DIR="+b.TempDir(), "MEMSYNC_MAX_BYTES=1000000000", "MCP_MEMORY_MAX_ENTRIES=0")
	repo := ralphRepo(b, env)
	f := memfile.Parse(memfile.GenerateFile(1<<20, 1))
	f.Dialect = memfile.Ralph
	f.ConvertDialect()
	data := f.Render()
	if err := os.WriteFile(filepath.Join(repo, ".agent", "memories.md"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	s := string(data)
	last := strings.TrimPrefix(s[strings.LastIndex(s, "\n## ")+1:], "## ")
	last, _, _ = strings.Cut(last, "\n")
	types := map[string]string{"Patterns": "pattern", "Decisions": "decision", "Fixes": "fix", "Context": "context"}
	lastType, otherType := types[last], "pattern"
	if lastType == "pattern" {
		otherType = "decision"
	}
	// memsync-append follows ralph's write, so it rebuilds the content index
	// (dedup) first; memsync-again follows memsync's own append.
	sideBySide(b, []string{"ralph", "memsync-append", "memsync-again", "memsync-rewrite"}, []func(int) time.Duration{
		func(int) time.Duration {
			return runProcess(b, env, repo, ralph, "tools", "memory", "add", "a learning by ralph", "-t", lastType, "--format", "quiet")
		},
		func(i int) time.Duration {
			return runProcess(b, env, repo, memsyncBinary(b), "add", "-t", lastType, "a learning by memsync in the last section "+strings.Repeat("x", i%7)+time.Now().String())
		},
		func(i int) time.Duration {
			return runProcess(b, env, repo, memsyncBinary(b), "add", "-t", lastType, "another learning by memsync in the last section "+strings.Repeat("x", i%7)+time.Now().String())
		},
		func(i int) time.Duration {
			return runProcess(b, env, repo, memsyncBinary(b), "add", "-t", otherType, "a learning by memsync in another section "+strings.Repeat("x", i%7)+time.Now().String())
		},
	})
}
