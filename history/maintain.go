package history

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/lock"
)

// Every snapshot adds one small pack (pack.go), and a sync's fetch another,
// so Maintain keeps the object store packed without the user running git
// gc: past PackLimit packs it runs
//
//	git repack -d -q --geometric=2
//
// which rolls the small packs (and loose objects) into one, with deltas,
// leaving the large packs alone as long as each is at least twice the size
// of the ones below it: every object is rewritten O(log n) times over the
// repository's life, and the packs stay O(log n). Then
//
//	git commit-graph write --split --append --stdin-commits
//
// adds the new snapshots to the commit-graph, so git's walks of the
// history (merge-base in sync, git log) read no commit objects.
//
// A kept pack (a snapshot under way) is never part of a roll-up, and a
// pack rolled up is deleted only once the new pack holding its objects is
// in place, so a snapshot or git gc at the same time loses nothing.

// PackLimit is how many packs (not counting kept ones) the object store
// holds before Maintain repacks.
const PackLimit = 8

// maxRollup bounds the bytes of packs one Maintain may roll up: a larger
// roll-up (a repository of many large packs nobody has packed) is left to
// git's own gc, so no commit waits on it.
const maxRollup = 64 << 20

// Maintain repacks the object store and writes the commit-graph when it
// holds more than PackLimit packs; the caller holds no memsync lock (a
// snapshot can be taken meanwhile). Only one Maintain runs at a time in a
// repository: another one at work makes this one return at once. ctx
// bounds it (a hook's time); a git stopped half-way leaves only temp files
// git's gc removes.
func (h *History) Maintain(ctx context.Context) error {
	packDir := filepath.Join(h.Repo.CommonDir, "objects", "pack")
	packs, err := listPacks(packDir)
	if err != nil || len(packs) <= PackLimit || rollupBytes(packs, 2) > maxRollup {
		return err
	}
	state := filepath.Join(h.Repo.CommonDir, "memsync", "state")
	if err := fsutil.MkdirAll(state, h.Repo.Shared.Dir(0o777)); err != nil {
		return err
	}
	l, err := lock.Exclusive(ctx, filepath.Join(state, "maintenance.lock"), 10*time.Millisecond)
	if errors.Is(err, lock.ErrTimeout) {
		return nil // another one is at work
	}
	if err != nil {
		return err
	}
	defer func() { _ = l.Release() }()
	gitDir := "--git-dir=" + h.Repo.CommonDir
	if _, err := gitcmd.OutputContext(ctx, h.Repo.CommonDir, gitDir, "repack", "-d", "-q", "--geometric=2"); err != nil {
		return fmt.Errorf("pack memsync's history: %w", err)
	}
	head, err := h.head()
	if err != nil || head.IsZero() {
		return err
	}
	cmd := gitcmd.CommandContext(ctx, h.Repo.CommonDir, gitDir, "commit-graph", "write", "--no-progress", "--split", "--append", "--stdin-commits")
	cmd.Stdin = strings.NewReader(head.String() + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return gitcmd.Wrap(cmd.Args[1:], err, string(out))
	}
	return nil
}

// pack is one pack of the object store.
type pack struct {
	objects uint32 // from its index
	bytes   int64  // the .pack file's size
}

// listPacks lists the packs in dir that have an index and no .keep.
func listPacks(dir string) ([]pack, error) {
	names, err := filepath.Glob(filepath.Join(dir, "pack-*.pack"))
	if err != nil {
		return nil, err
	}
	var out []pack
	for _, name := range names {
		base := strings.TrimSuffix(name, ".pack")
		if _, err := os.Stat(base + ".keep"); err == nil {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			continue // gone meanwhile
		}
		n, err := idxObjects(base + ".idx")
		if err != nil {
			continue // no index (yet): git does not use it either
		}
		out = append(out, pack{objects: n, bytes: fi.Size()})
	}
	return out, nil
}

// idxObjects reads the number of objects from a version 2 pack index: the
// last entry of its fan-out table.
func idxObjects(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	var head [8 + 256*4]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return 0, err
	}
	if string(head[:4]) != "\xfftOc" {
		return 0, fmt.Errorf("%s: not a version 2 pack index", path)
	}
	return binary.BigEndian.Uint32(head[len(head)-4:]), nil
}

// rollupBytes is how many bytes of packs `git repack --geometric=factor`
// rolls up, as git 2.39 splits them (split_pack_geometry): ordered by
// object count, the packs from the largest down that each hold at least
// factor times the next smaller one stay, but for the smallest of them,
// and of those the ones holding less than factor times all the objects
// rolled up below them join the roll-up.
func rollupBytes(packs []pack, factor uint64) int64 {
	sort.Slice(packs, func(i, j int) bool { return packs[i].objects < packs[j].objects })
	i := len(packs) - 1
	for ; i > 0; i-- {
		if uint64(packs[i].objects) < factor*uint64(packs[i-1].objects) {
			break
		}
	}
	split := 0
	if i > 0 {
		split = i + 1 // the top of the pair that broke the progression
	}
	var objects uint64
	var size int64
	for _, p := range packs[:split] {
		objects += uint64(p.objects)
		size += p.bytes
	}
	for ; split < len(packs) && split > 0; split++ {
		if uint64(packs[split].objects) >= factor*objects {
			break
		}
		objects += uint64(packs[split].objects)
		size += packs[split].bytes
	}
	return size
}
