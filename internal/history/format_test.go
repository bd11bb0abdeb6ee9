package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// addTreeV1 adds to b a snapshot tree in format 1, as memsync wrote it
// before format 2: each file one blob, no format blob.
func addTreeV1(b *batch, files Files) plumbing.Hash {
	var root []treeEntry
	if files.Archive != nil {
		blob := b.add(newObject(plumbing.BlobObject, files.Archive))
		sub := b.add(newObject(plumbing.TreeObject, encodeTree([]treeEntry{{"100644", MemoryName, blob}})))
		root = append(root, treeEntry{"40000", "archive", sub})
	}
	if files.Memory != nil {
		root = append(root, treeEntry{"100644", MemoryName, b.add(newObject(plumbing.BlobObject, files.Memory))})
	}
	return b.add(newObject(plumbing.TreeObject, encodeTree(root)))
}

// commitTree publishes a snapshot commit of tree onto the ref.
func commitTree(t *testing.T, h *History, b *batch, tree plumbing.Hash) string {
	t.Helper()
	old, err := h.head()
	if err != nil {
		t.Fatal(err)
	}
	data := encodeCommit(tree, []plumbing.Hash{old}, time.Now(), message("", Provenance{}, "", record{}, false), h.identity())
	commit := b.add(newObject(plumbing.CommitObject, data))
	if err := h.publish(b, commit, old); err != nil {
		t.Fatal(err)
	}
	return commit.String()
}

// Chunks put together are the file, byte for byte, whatever the bytes; no
// chunk is larger than twice chunkMax.
func TestChunkConcatenates(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	inputs := [][]byte{nil, {}, []byte("x"), []byte("# a\n"), bytes.Repeat([]byte("z"), 300<<10), memfile.GenerateFile(1<<20, 3)}
	for i := 0; i < 50; i++ {
		var b bytes.Buffer
		for b.Len() < r.Intn(400<<10) {
			switch r.Intn(4) {
			case 0:
				fmt.Fprintf(&b, "## Pattern: %d\n", r.Int())
			case 1:
				b.WriteString(strings.Repeat("w", r.Intn(200<<10)))
			default:
				fmt.Fprintf(&b, "- Content: %x\r\n", r.Int63())
			}
		}
		inputs = append(inputs, b.Bytes())
	}
	for _, in := range inputs {
		parts := chunk(in)
		if len(parts) == 0 {
			t.Fatal("no chunk")
		}
		for _, p := range parts {
			if len(p) > 2*chunkMax {
				t.Fatalf("a chunk of %d bytes", len(p))
			}
		}
		if got := bytes.Join(parts, nil); !bytes.Equal(got, in) {
			t.Fatalf("chunks of %d bytes put together are %d bytes", len(in), len(got))
		}
	}
}

func FuzzChunk(f *testing.F) {
	f.Add([]byte("# a\n## b\n"))
	f.Add(memfile.GenerateFile(20<<10, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got := bytes.Join(chunk(data), nil); !bytes.Equal(got, data) {
			t.Fatal("chunks do not put the file together")
		}
	})
}

// An append changes the last chunk (or adds one); an edit in the middle
// changes the chunk it lands in (and at most the next, when it moves a
// boundary).
func TestChunksChangeWhereTheFileDoes(t *testing.T) {
	data := memfile.GenerateFile(1<<20, 2)
	before := chunkFile(data)
	if n := len(before.objs); n < 20 || n > 200 {
		t.Fatalf("a 1 MB memory makes %d chunks; want about 60", n)
	}
	changed := func(after chunked) int {
		n := 0
		for _, o := range after.objs {
			if _, ok := before.byHash[o.hash]; !ok {
				n++
			}
		}
		return n
	}
	appended := append(bytes.Clone(data), "\n## Fix: one more\n- Content: learned\n"...)
	if n := changed(chunkFile(appended)); n != 1 {
		t.Fatalf("an append changed %d chunks", n)
	}
	mid := bytes.Index(data[len(data)/2:], []byte("\n## ")) + len(data)/2 + 1
	edited := append(append(bytes.Clone(data[:mid]), "## Fix: inserted\n- Content: in the middle\n\n"...), data[mid:]...)
	if n := changed(chunkFile(edited)); n < 1 || n > 2 {
		t.Fatalf("an insertion changed %d chunks", n)
	}
}

// A snapshot of one added entry in a 10 MB memory writes a few tens of KB
// (one chunk, two trees, a commit), not the file.
func TestSnapshotCostsWhatChanged(t *testing.T) {
	h, dir := testRepo(t)
	data := memfile.GenerateFile(10<<20, 1)
	write(t, h.Store.Path(), string(data))
	take(t, h, "")
	packs := func() map[string]int64 {
		m := map[string]int64{}
		l, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
		for _, p := range l {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			m[p] = fi.Size()
		}
		return m
	}
	was := packs()
	write(t, h.Store.Path(), string(data)+"\n## Fix: one more\n- Tags: t\n- Content: learned once more\n")
	err := h.Store.WithLock(func() error {
		res, err := h.TakeLocked(context.Background(), "", Provenance{})
		if err == nil && !res.Created {
			err = errors.New("no snapshot")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var written int64
	for p, n := range packs() {
		if _, ok := was[p]; !ok {
			written += n
		}
	}
	if written == 0 || written > 64<<10 {
		t.Fatalf("the snapshot of one added entry wrote %d bytes of pack", written)
	}
	if got := testgit.Show(t, dir, Ref+":memories.md"); !strings.HasSuffix(got, "learned once more\n") || len(got) != len(data)+len("\n## Fix: one more\n- Tags: t\n- Content: learned once more\n") {
		t.Fatalf("plain git rebuilds %d bytes", len(got))
	}
	s, _ := h.Head()
	if !strings.Contains(s.Subject, "snapshot") {
		t.Fatal(s.Subject)
	}
	entries, c, ok := recorded(readMessage(t, h, s.Commit))
	if !ok || c.Added != 1 || c.Removed != 0 || c.Changed != 0 || entries == 0 {
		t.Fatalf("recorded %d entries, %+v, %v", entries, c, ok)
	}
}

func readMessage(t *testing.T, h *History, commit string) string {
	t.Helper()
	c, err := readCommit(h.st, plumbing.NewHash(commit))
	if err != nil {
		t.Fatal(err)
	}
	return c.message
}

// A history in format 1 stays readable; the first change writes format 2,
// with the format blob; log, Files, Resolve and rollback read both.
func TestFormat1HistoryReadAndMigrated(t *testing.T) {
	h, dir := testRepo(t)
	v1 := memfile.Header + "\n" + entry(idA, "A", "first")
	arch := memfile.Header + "\n" + entry(idC, "C", "old")
	write(t, h.Store.Path(), v1)
	write(t, h.Store.ArchivePath(), arch)
	files, err := h.readLiveLocked()
	if err != nil {
		t.Fatal(err)
	}
	b := &batch{}
	old := commitTree(t, h, b, addTreeV1(b, files))
	if got := testgit.Git(t, dir, "ls-tree", "-r", "--name-only", Ref); got != "archive/memories.md\nmemories.md" {
		t.Fatalf("format 1 tree: %q", got)
	}
	// Unchanged: no snapshot, the history stays format 1.
	if res := take(t, h, ""); res.Created {
		t.Fatal("an unchanged memory made a snapshot")
	}
	v2 := v1 + "\n" + entry(idB, "B", "second")
	write(t, h.Store.Path(), v2)
	res := take(t, h, "")
	if !res.Created {
		t.Fatal("no snapshot")
	}
	if got := testgit.Git(t, dir, "ls-tree", "-r", "--name-only", Ref); got != "archive/memories.md/000000\nformat\nmemories.md/000000" {
		t.Fatalf("format 2 tree: %q", got)
	}
	if got := testgit.Show(t, dir, Ref+":format"); got != "memsync snapshot format 2\n" {
		t.Fatalf("format blob %q", got)
	}
	if testgit.Show(t, dir, Ref+":memories.md") != v2 || testgit.Show(t, dir, Ref+":archive/memories.md") != arch {
		t.Fatal("plain git does not rebuild the files")
	}
	_, c, ok := recorded(readMessage(t, h, res.Snapshot.Commit))
	if !ok || c != (Counts{Added: 1}) {
		t.Fatalf("record against the format 1 parent: %+v %v", c, ok)
	}
	f, err := h.Files(old)
	if err != nil || string(f.Memory) != v1 || string(f.Archive) != arch {
		t.Fatalf("format 1 files: %q %q %v", f.Memory, f.Archive, err)
	}
	for _, rev := range []string{old, res.Snapshot.Commit} {
		if _, err := h.Resolve(context.Background(), rev); err != nil {
			t.Fatalf("resolve %s: %v", rev, err)
		}
	}
	log, err := h.Log(0)
	if err != nil || len(log) != 2 {
		t.Fatalf("log: %v %v", log, err)
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

// A snapshot in a newer format is refused by name, and nothing is written
// over it.
func TestNewerFormatRefused(t *testing.T) {
	h, _ := testRepo(t)
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idA, "A", "first"))
	b := &batch{}
	f := b.add(newObject(plumbing.BlobObject, []byte("memsync snapshot format 3\n")))
	tree := b.add(newObject(plumbing.TreeObject, encodeTree([]treeEntry{{"100644", formatName, f}})))
	newer := commitTree(t, h, b, tree)
	if _, err := h.Files(newer); !errors.Is(err, ErrNewerFormat) {
		t.Fatalf("Files: %v", err)
	}
	if _, err := h.Take(context.Background(), "", Provenance{}); !errors.Is(err, ErrNewerFormat) {
		t.Fatalf("Take: %v", err)
	}
	if head, _ := h.head(); head.String() != newer {
		t.Fatal("the ref moved")
	}
}

// The record of a change parsed from the part that differs is the record
// of the whole files, for random edits of a plain orch file: appends,
// insertions, deletions and edits anywhere, headings included.
func TestRecordSinceIsRecordOf(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	base := memfile.GenerateFile(64<<10, 5)
	for i := 0; i < 300; i++ {
		after := bytes.Clone(base)
		for range 1 + r.Intn(3) {
			at := r.Intn(len(after) + 1)
			switch r.Intn(4) {
			case 0:
				after = append(after, fmt.Sprintf("\n## Fix: new %d\n- Content: c %d\n", i, i)...)
			case 1:
				after = append(after[:at:at], append([]byte(fmt.Sprintf("## Note: ins %d\n- Content: x\n", i)), after[at:]...)...)
			case 2:
				end := min(len(after), at+r.Intn(400))
				after = append(after[:at:at], after[end:]...)
			default:
				if at < len(after) {
					after[at] = "#x\n -"[r.Intn(5)]
				}
			}
		}
		if !memfile.PlainOrch(after) {
			continue
		}
		whole, _ := recordOf(base, after, true)
		parentMsg := "s\n\n" + record{entries: len(memfile.Parse(base).Entries)}.trailers()
		part, ok := recordSince(parentMsg, base, after, true)
		if !ok || part.entries != whole.entries || part.trailers() != whole.trailers() {
			t.Fatalf("edit %d: from the part %d entries\n%s\nfrom the whole %d\n%s", i, part.entries, part.trailers(), whole.entries, whole.trailers())
		}
	}
}
