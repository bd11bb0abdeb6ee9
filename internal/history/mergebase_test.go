package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// TestMergeBaseWalk: on random histories (merges, criss-cross merges,
// commits dated before their parents), every answer of mergeBaseWalk is
// git's: the one best common ancestor git merge-base --all lists, or none;
// where git lists several, the walk leaves the answer to git. It answers
// most questions itself; isAncestor, built on it, answers as git.
func TestMergeBaseWalk(t *testing.T) {
	h, dir := testRepo(t)
	r := rand.New(rand.NewPCG(7, 11))
	const n = 160
	var script strings.Builder
	when := int64(1_700_000_000)
	for i := 1; i <= n; i++ {
		when += int64(r.IntN(600))
		date := when
		if r.IntN(10) == 0 {
			date -= 5000 // a clock behind its parents'
		}
		fmt.Fprintf(&script, "commit refs/heads/c%d\nmark :%d\ncommitter t <t@x> %d +0000\ndata 2\nc\n", i, i, date)
		if i > 1 {
			fmt.Fprintf(&script, "from :%d\n", i-1-r.IntN(min(i-1, 12)))
			if i > 3 && r.IntN(4) == 0 {
				fmt.Fprintf(&script, "merge :%d\n", 1+r.IntN(i-1))
			}
		}
		script.WriteString("\n")
	}
	// Two commits with no parent: histories with no common ancestor.
	fmt.Fprintf(&script, "commit refs/heads/lone\nmark :%d\ncommitter t <t@x> %d +0000\ndata 2\nl\n\n", n+1, when)
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(script.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	hashes := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(testgit.Git(t, dir, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/")), "\n") {
		name, hash, _ := strings.Cut(line, " ")
		var i int
		if _, err := fmt.Sscanf(name, "c%d", &i); err == nil {
			hashes[i] = hash
		} else if name == "lone" {
			hashes[n+1] = hash
		}
	}
	answered := 0
	const questions = 300
	for q := range questions {
		a := hashes[1+r.IntN(n+1)]
		var others []string
		for range 1 + r.IntN(3) {
			others = append(others, hashes[1+r.IntN(n+1)])
		}
		got, ok := h.mergeBaseWalk(a, others)
		cmd := exec.Command("git", append([]string{"merge-base", "--all", a}, others...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if ee, isExit := err.(*exec.ExitError); err != nil && (!isExit || ee.ExitCode() != 1) {
			t.Fatal(err)
		}
		all := strings.Fields(string(out))
		if !ok {
			continue
		}
		answered++
		if want := strings.Join(all, " "); got != want {
			t.Fatalf("question %d: merge base of %s and %v: walk %q, git --all %q", q, a, others, got, want)
		}
	}
	if answered < questions/2 {
		t.Fatalf("the walk answered %d of %d questions", answered, questions)
	}
	t.Logf("the walk answered %d of %d", answered, questions)
	// isAncestor answers as git merge-base --is-ancestor.
	for range 100 {
		a, b := hashes[1+r.IntN(n+1)], hashes[1+r.IntN(n+1)]
		got, err := h.isAncestor(context.Background(), a, b)
		want := exec.Command("git", "merge-base", "--is-ancestor", a, b)
		want.Dir = dir
		if werr := want.Run(); err != nil || got != (werr == nil) {
			t.Fatalf("isAncestor(%s, %s) = %v, %v; git: %v", a, b, got, err, werr)
		}
	}
	// MergeBase asks git where the walk leaves it, and gives its answer.
	base, err := h.MergeBase(context.Background(), hashes[n], hashes[n-1])
	if want := strings.TrimSpace(testgit.Git(t, dir, "merge-base", hashes[n], hashes[n-1])); err != nil || base != want {
		t.Fatalf("MergeBase: %q, %v; git: %q", base, err, want)
	}
	// A shallow clone's history is cut where the walk cannot see: git's.
	if err := os.WriteFile(filepath.Join(h.Repo.CommonDir, "shallow"), []byte(hashes[1]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.mergeBaseWalk(hashes[2], []string{hashes[3]}); ok {
		t.Fatal("the walk answered in a shallow repository")
	}
}
