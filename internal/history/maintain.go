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
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/lock"
)

// Every snapshot adds one small pack (pack.go), and a sync's fetch another,
// so Maintain keeps the object store packed without the user running git
// gc: past PackLimit packs it rolls the small ones into one, with deltas,
// choosing them as `git repack --geometric=2` does (each larger pack stays
// while it holds at least twice the objects of those below it: every object
// is rewritten O(log n) times over the repository's life, and the packs
// stay O(log n)):
//
//	git pack-objects --stdin-packs objects/pack/pack   (the small packs' names in)
//
// then deletes the packs rolled up, index first as git repack does, once
// the new pack is in place (a pack whose index went, because the process
// was killed in between, is removed by a later Maintain; readers leave it
// out: indexedPacks). It does not run git repack itself: repack -d
// ends with git prune-packed, which removes the empty objects/XX folders,
// and a git commit in another worktree that has just made one to write an
// object into fails ("unable to create temporary file"). Loose objects are
// git's (a snapshot writes none) and left to its gc. Then
//
//	git commit-graph write --split --append --stdin-commits
//
// adds the new snapshots to the commit-graph, so git's walks of the
// history (merge-base in sync, git log) read no commit objects.
//
// A kept pack (a snapshot under way) is never rolled up, and a pack is
// deleted only once the new pack holding its objects is in place, so a
// snapshot or git gc at the same time loses nothing. A repository with a
// multi-pack-index, promisor or cruft packs is left to git's own
// maintenance.

// PackLimit is how many packs (not counting kept ones) the object store
// holds before Maintain repacks.
const PackLimit = 8

// maxRollup bounds the bytes of packs one Maintain may roll up: a larger
// roll-up (a repository of many large packs nobody has packed) is left to
// git's own gc, so no commit waits on it.
const maxRollup = 64 << 20

// Maintain packs the object store and writes the commit-graph when it
// holds more than PackLimit packs (Due), and returns how many packs it
// rolled into one; the caller holds no memsync lock (a snapshot can be
// taken meanwhile). Only one Maintain runs at a time in a repository: one
// finding another at work waits for it up to wait (lock.DefaultTimeout
// when wait is 0; not at all when it is negative), then returns 0. ctx bounds it (a hook's time); a git stopped half-way
// leaves only a temp file git's gc removes, and no pack is deleted before
// the new one is in place.
func (h *History) Maintain(ctx context.Context, wait time.Duration) (int, error) {
	if !h.Due() {
		return 0, nil
	}
	packDir := filepath.Join(h.Repo.CommonDir, "objects", "pack")
	state := filepath.Join(h.Repo.CommonDir, "memsync", "state")
	if err := fsutil.MkdirAll(state, h.Repo.Shared.Dir(0o777)); err != nil {
		return 0, err
	}
	var (
		l   *lock.Lock
		err error
	)
	if wait < 0 {
		l, err = lock.TryExclusive(filepath.Join(state, "maintenance.lock"))
	} else {
		l, err = lock.Exclusive(ctx, filepath.Join(state, "maintenance.lock"), wait)
	}
	if l == nil && err == nil || errors.Is(err, lock.ErrTimeout) {
		return 0, nil // another one is at work
	}
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Release() }()
	if err := h.removeOrphanPacks(); err != nil {
		return 0, err
	}
	// Listed again under the lock: the one before may have rolled them up.
	packs, err := listPacks(packDir)
	if err != nil {
		return 0, err
	}
	roll, _ := rollup(packs)
	if len(roll) < 2 {
		return 0, nil
	}
	made, err := h.packTogether(ctx, packDir, roll)
	if made == "" || err != nil {
		return 0, err
	}
	for _, p := range roll {
		if p.base == made {
			continue // the same objects packed the same way
		}
		for _, ext := range []string{".idx", ".pack", ".rev", ".bitmap"} {
			_ = os.Remove(p.base + ext)
		}
	}
	head, err := h.head()
	if err != nil || head.IsZero() {
		return len(roll), err
	}
	gitDir := "--git-dir=" + h.Repo.CommonDir
	cmd := gitcmd.CommandContext(ctx, h.Repo.CommonDir, gitDir, "commit-graph", "write", "--no-progress", "--split", "--append", "--stdin-commits")
	cmd.Stdin = strings.NewReader(head.String() + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return len(roll), gitcmd.Wrap(cmd.Args[1:], err, string(out))
	}
	return len(roll), nil
}

// packTogether writes the objects of roll as one new pack in packDir (git
// pack-objects --stdin-packs) and returns its path without extension; ""
// when git gc or repack, running beside it, took one of the packs away
// meanwhile (pack-objects then fails: "packfile ... cannot be accessed"):
// that repack packs their objects.
func (h *History) packTogether(ctx context.Context, packDir string, roll []pack) (string, error) {
	var names strings.Builder
	for _, p := range roll {
		names.WriteString(filepath.Base(p.base) + ".pack\n")
	}
	cmd := gitcmd.CommandContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "pack-objects", "--stdin-packs", "-q", "--delta-base-offset", filepath.Join(packDir, "pack"))
	cmd.Stdin = strings.NewReader(names.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if gone(roll) {
			return "", nil
		}
		return "", gitcmd.Wrap(cmd.Args[1:], err, stderr.String())
	}
	made := filepath.Join(packDir, "pack-"+strings.TrimSpace(string(out)))
	for _, ext := range []string{".pack", ".idx"} {
		if _, err := os.Stat(made + ext); err != nil {
			return "", fmt.Errorf("pack memsync's history: %w", err)
		}
	}
	return made, nil
}

// gone tells whether a file of one of packs is no longer there: a git gc
// or repack running beside Maintain rolled it into its own pack.
func gone(packs []pack) bool {
	for _, p := range packs {
		for _, ext := range []string{".pack", ".idx"} {
			if _, err := os.Stat(p.base + ext); errors.Is(err, os.ErrNotExist) {
				return true
			}
		}
	}
	return false
}

// Due tells whether Maintain has work: the object store holds more than
// PackLimit packs, of which it would roll up two or more, within maxRollup
// bytes. It reads the pack folder and the packs' index headers only.
func (h *History) Due() bool {
	packs, err := listPacks(filepath.Join(h.Repo.CommonDir, "objects", "pack"))
	if err != nil || len(packs) <= PackLimit {
		return false
	}
	roll, size := rollup(packs)
	return len(roll) >= 2 && size <= maxRollup
}

// MaintainSoon is what a snapshot or sync does once it has added a pack:
// nothing when Maintain has no work (Due); else, as git's gc --auto does,
// it hands the packing to Detach when that is set and git's
// maintenance.autoDetach (else gc.autoDetach) is not false, so the command
// returns at once; else, or when Detach fails, it packs now. The snapshot
// or sync stands whatever packing does.
func (h *History) MaintainSoon(ctx context.Context) {
	if !h.Due() {
		return
	}
	if h.Detach != nil && autoDetach(gitconfig.Effective(h.Repo.CommonDir, h.Repo.GitDir)) {
		if h.Detach(h.Repo.CommonDir) == nil {
			return
		}
	}
	_, _ = h.Maintain(ctx, -1) // one at work does it
}

// autoDetach is git's choice of running its automatic maintenance in the
// background: maintenance.autoDetach, else gc.autoDetach, else yes.
func autoDetach(cfg *gitconfig.Config) bool {
	for _, key := range []string{"maintenance.autoDetach", "gc.autoDetach"} {
		if v, ok := cfg.Bool(key); ok {
			return v
		}
	}
	return true
}

// pack is one pack of the object store.
type pack struct {
	base    string // ".../objects/pack/pack-HASH"
	objects uint32 // from its index
	bytes   int64  // the .pack file's size
}

// listPacks lists the packs in dir that have an index and no .keep; none
// where git's own maintenance is at work in ways Maintain leaves to it (a
// multi-pack-index, promisor or cruft packs).
func listPacks(dir string) ([]pack, error) {
	for _, pattern := range []string{"multi-pack-index", "*.promisor", "*.mtimes"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
			return nil, nil
		}
	}
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
		out = append(out, pack{base: base, objects: n, bytes: fi.Size()})
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

// factor is the geometric progression the packs keep (git repack
// --geometric=2).
const factor = 2

// rollup is the packs `git repack --geometric=2` rolls up, as git
// 2.39 splits them (split_pack_geometry), and their bytes: ordered by
// object count, the packs from the largest down that each hold at least
// factor times the next smaller one stay, but for the smallest of them,
// and of those the ones holding less than factor times all the objects
// rolled up below them join the roll-up.
func rollup(packs []pack) ([]pack, int64) {
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
	return packs[:split], size
}
