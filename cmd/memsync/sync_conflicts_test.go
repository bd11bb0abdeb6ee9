package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editEntry replaces old with new in the memory file of the clone at dir,
// as a person's editor would.
func editEntry(t *testing.T, dir, old, new string) {
	t.Helper()
	path := filepath.Join(dir, ".agent", "memories.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s lacks %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// conflictIDs is what `memsync conflicts --json` lists in dir.
func conflictIDs(t *testing.T, env []string, dir string) []string {
	t.Helper()
	var out []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(memsyncIn(t, env, dir, "conflicts", "--json")), &out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range out {
		ids = append(ids, c.ID)
	}
	return ids
}

// TestSyncConflictsTravel: two clones edit one entry differently. The clone
// whose sync finds the conflict records it; the other clone's next sync
// (a fast-forward to that result) lists it too, with both sides; a
// resolution in either clone syncs to the other, and the conflict is gone
// everywhere.
func TestSyncConflictsTravel(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "init")
	}
	id := strings.TrimSpace(memsyncIn(t, env, a, "add", "the pool size is set in db/pool.go"))
	memsyncIn(t, env, a, "add", "another fact")
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")

	editEntry(t, a, "set in db/pool.go", "set in config/pool.yaml (A)")
	editEntry(t, b, "set in db/pool.go", "set by POOL_SIZE (B)")
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync") // the merge that finds the conflict
	if got := conflictIDs(t, env, b); len(got) != 1 || got[0] != id {
		t.Fatalf("b's conflicts: %v, want [%s]", got, id)
	}
	memsyncIn(t, env, a, "sync") // a fast-forward to b's merge
	if got := conflictIDs(t, env, a); len(got) != 1 || got[0] != id {
		t.Fatalf("a's conflicts after its sync: %v, want [%s]", got, id)
	}
	text := memsyncIn(t, env, a, "conflicts")
	for _, side := range []string{"config/pool.yaml (A)", "POOL_SIZE (B)"} {
		if !strings.Contains(text, side) {
			t.Fatalf("a's conflict view lacks %q:\n%s", side, text)
		}
	}

	// a settles it; b hears of it with its next sync.
	memsyncIn(t, env, a, "resolve", "--ours", id)
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	for _, d := range []string{a, b} {
		if got := conflictIDs(t, env, d); len(got) != 0 {
			t.Fatalf("%s still lists conflicts %v after the resolution synced", filepath.Base(d), got)
		}
	}
	for _, d := range []string{a, b} {
		if out := memsyncIn(t, env, d, "show", id); !strings.Contains(out, "POOL_SIZE (B)") {
			t.Fatalf("%s holds, after the resolution:\n%s", filepath.Base(d), out)
		}
	}
}

// TestSyncTextMergeKeptForReview: two clones edit different lines of one
// entry. The merge applies both edits as text and says so; every clone's
// `memsync conflicts` lists it as merged, with ours before the merge, until
// someone settles it.
func TestSyncTextMergeKeptForReview(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "init")
	}
	id := strings.TrimSpace(memsyncIn(t, env, a, "add", "deploys go through the staging cluster first\n\nthe cluster runs three nodes\n\nrollbacks take ten minutes"))
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	editEntry(t, a, "three nodes", "five nodes")
	editEntry(t, b, "ten minutes", "two minutes")
	memsyncIn(t, env, a, "sync")
	if out := memsyncIn(t, env, b, "sync"); !strings.Contains(out, "merged as text") {
		t.Fatalf("b's sync does not say the edits were merged as text:\n%s", out)
	}
	memsyncIn(t, env, a, "sync")
	for _, d := range []string{a, b} {
		if out := memsyncIn(t, env, d, "show", id); !strings.Contains(out, "five nodes") || !strings.Contains(out, "two minutes") {
			t.Fatalf("%s does not hold both edits:\n%s", filepath.Base(d), out)
		}
		var got []struct {
			ID, Kind string
			Before   struct{ Content string }
		}
		if err := json.Unmarshal([]byte(memsyncIn(t, env, d, "conflicts", "--json")), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != id || got[0].Kind != "merged" || got[0].Before.Content == "" {
			t.Fatalf("%s lists %+v, want the text merge of %s", filepath.Base(d), got, id)
		}
	}
	if out := memsyncIn(t, env, a, "conflicts"); !strings.Contains(out, "ours before the merge") {
		t.Fatalf("the conflicts view:\n%s", out)
	}
	memsyncIn(t, env, a, "resolve", "--ours", id)
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	for _, d := range []string{a, b} {
		if got := conflictIDs(t, env, d); len(got) != 0 {
			t.Fatalf("%s still lists %v", filepath.Base(d), got)
		}
		if out := memsyncIn(t, env, d, "show", id); !strings.Contains(out, "five nodes") || !strings.Contains(out, "two minutes") {
			t.Fatalf("%s lost the merge after --ours:\n%s", filepath.Base(d), out)
		}
	}
}
