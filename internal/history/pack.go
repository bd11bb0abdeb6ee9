package history

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/fsutil"
)

// A snapshot's objects are written as one pack, the way git fetch writes
// what it receives, and for the same reason: a loose object that no ref
// reaches yet is fair game for a concurrent 'git gc --prune=now' (git prune
// marks what the refs reach, then deletes every other loose object, however
// young), so a ref moved to new loose objects between gc's marking and its
// deleting points at pruned objects. A pack is never touched by git prune,
// and one with a .keep file beside it is never deleted by git repack; the
// .keep exists before the pack is visible and goes once the ref reaches
// the objects. What is left is an ordinary pack that git's next gc folds
// into its own.

// batch is the objects of one ref update, hashed but not written yet; each
// object once.
type batch struct {
	objs []*object
	seen map[plumbing.Hash]bool
}

// add puts o in the batch and returns its hash.
func (b *batch) add(o *object) plumbing.Hash {
	if b.seen == nil {
		b.seen = map[plumbing.Hash]bool{}
	}
	if !b.seen[o.hash] {
		b.seen[o.hash] = true
		b.objs = append(b.objs, o)
	}
	return o.hash
}

// snapshotKeep begins the .keep files writePack writes (removeOrphanPacks
// knows them by it).
const snapshotKeep = "memsync snapshot (pid "

// keptPack is a pack written by writePack: its files, and the .keep that
// guards it until release.
type keptPack struct{ base string } // ".../objects/pack/pack-HASH"

// release removes the .keep: the ref reaches the objects now.
func (p *keptPack) release() { _ = os.Remove(p.base + ".keep") }

// remove deletes the pack (a ref update that failed): its index first (git
// finds packs by their index), then the pack, then the .keep, so no reader
// finds an index without its pack, nor an unkept pack.
func (p *keptPack) remove() {
	for _, ext := range []string{".idx", ".pack", ".keep"} {
		_ = os.Remove(p.base + ext)
	}
}

// publish moves Ref from cur to commit, whose new objects are b's: they are
// written into a kept pack first, checked to be there right before the ref
// moves, and a failed update removes them again. The caller holds the
// writers' lock.
func (h *History) publish(b *batch, commit, cur plumbing.Hash) error {
	var p *keptPack
	if len(b.objs) > 0 {
		var err error
		if p, err = h.writePack(b.objs); err != nil {
			return err
		}
	}
	err := h.checkPresent(p, b, commit)
	if err == nil {
		err = h.updateRef(commit, cur)
	}
	if err != nil {
		// A killed snapshot's git update-ref may have moved the ref to this
		// very commit meanwhile (the same files in the same second make the
		// same commit, and the same pack): then the pack is the ref's and
		// stays.
		if now, herr := h.head(); herr == nil && now == commit {
			err = nil
		}
	}
	if err != nil {
		if p != nil {
			p.remove()
		}
		return err
	}
	if p != nil {
		p.release()
		h.st.Reindex() // this History reads the new snapshot next
	}
	return nil
}

// checkPresent makes sure the ref is never moved to a commit that is not
// there: the pack holding it is in place, or (a fast-forward to a fetched
// snapshot) the object store has it.
func (h *History) checkPresent(p *keptPack, b *batch, commit plumbing.Hash) error {
	if p != nil && b.seen[commit] {
		for _, ext := range []string{".keep", ".idx", ".pack"} {
			if _, err := os.Stat(p.base + ext); err != nil {
				return fmt.Errorf("write snapshot: %w", err)
			}
		}
		return nil
	}
	if _, err := h.st.EncodedObjectSize(commit); err != nil {
		return fmt.Errorf("%s: commit %s: %w", Ref, commit, err)
	}
	return nil
}

// writePack writes objs as one pack and its index into objects/pack,
// named by the pack's checksum as git names packs, with a .keep file that
// exists before the pack is visible. The files are written as temp files
// in memsync's state folder (where doctor finds those a killed process
// left; git prune removes tmp_ files in the objects folder, however
// young), synced, and renamed into place: the index first, so that neither
// git (which looks for indexes) nor go-git (which looks for packs) finds
// half a pack.
func (h *History) writePack(objs []*object) (*keptPack, error) {
	pack, idx, sum, err := encodePack(objs)
	if err != nil {
		return nil, fmt.Errorf("write snapshot pack: %w", err)
	}
	packDir := filepath.Join(h.Repo.CommonDir, "objects", "pack")
	tmpDir := filepath.Join(h.Repo.CommonDir, "memsync", "state")
	for _, d := range []string{packDir, tmpDir} {
		if err := fsutil.MkdirAll(d, h.Repo.Shared.Dir(0o777)); err != nil {
			return nil, fmt.Errorf("write snapshot pack: %w", err)
		}
	}
	tmpPack, err := writeTemp(tmpDir, pack, h.Repo.Shared)
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(tmpPack) }() // gone once renamed
	tmpIdx, err := writeTemp(tmpDir, idx, h.Repo.Shared)
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(tmpIdx) }()
	p := &keptPack{base: filepath.Join(packDir, "pack-"+sum)}
	// A .keep of this name is one a killed memsync left (same objects, same
	// second): the writers' lock keeps out every other memsync, so it is
	// taken over.
	keep, err := fsutil.OpenFile(p.base+".keep", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, h.Repo.Shared.File(0o666))
	if err != nil {
		return nil, fmt.Errorf("write snapshot pack: %w", err)
	}
	_, err = keep.WriteString(snapshotKeep + strconv.Itoa(os.Getpid()) + ")\n")
	if cerr := keep.Close(); err == nil {
		err = cerr
	}
	// The pack first, its index last, as git does: git finds packs by
	// their .idx, and an index whose pack is not there yet makes a git that
	// looks at that moment (a concurrent gc) drop the pack as broken.
	if err == nil {
		err = os.Rename(tmpPack, p.base+".pack")
	}
	if err == nil {
		err = os.Rename(tmpIdx, p.base+".idx")
	}
	if err != nil {
		p.remove()
		return nil, fmt.Errorf("write snapshot pack: %w", err)
	}
	return p, nil
}

// writeTemp writes data to a new read-only temp file in dir (named as
// fsutil names its temp files, so doctor finds one a killed process left),
// synced, read-only as git leaves packs (with the repository's sharing),
// and returns its path.
func writeTemp(dir string, data []byte, shared fsutil.Shared) (string, error) {
	f, err := os.CreateTemp(dir, ".pack.tmp-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", fmt.Errorf("write snapshot pack: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(shared.File(0o444))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("write snapshot pack: %w", err)
	}
	return f.Name(), nil
}

// packType is the type number of a pack entry's header; false for a type
// snapshots do not write.
func packType(t plumbing.ObjectType) (byte, bool) {
	switch t {
	case plumbing.CommitObject:
		return 1, true
	case plumbing.TreeObject:
		return 2, true
	case plumbing.BlobObject:
		return 3, true
	}
	return 0, false
}

// encodePack encodes objs as a version 2 pack (each object whole, no
// deltas, compressed as git compresses loose objects by default: best
// speed) and its version 2 index; sum is the pack's checksum in hex, its
// name.
func encodePack(objs []*object) (pack, idx []byte, sum string, err error) {
	type entry struct {
		hash   plumbing.Hash
		offset uint64
		crc    uint32
	}
	var buf bytes.Buffer
	buf.WriteString("PACK")
	_ = binary.Write(&buf, binary.BigEndian, [2]uint32{2, uint32(len(objs))})
	entries := make([]entry, 0, len(objs))
	zw, err := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	if err != nil {
		return nil, nil, "", err
	}
	for _, o := range objs {
		start := buf.Len()
		typ, ok := packType(o.typ)
		if !ok {
			return nil, nil, "", fmt.Errorf("object %s: type %s", o.hash, o.typ)
		}
		size := uint64(len(o.data))
		c := typ<<4 | byte(size&0x0f)
		for size >>= 4; size > 0; size >>= 7 {
			buf.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
		}
		buf.WriteByte(c)
		zw.Reset(&buf)
		if _, err := zw.Write(o.data); err != nil {
			return nil, nil, "", err
		}
		if err := zw.Close(); err != nil {
			return nil, nil, "", err
		}
		entries = append(entries, entry{o.hash, uint64(start), crc32.ChecksumIEEE(buf.Bytes()[start:])})
	}
	packSum := sha1.Sum(buf.Bytes())
	buf.Write(packSum[:])

	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].hash[:], entries[j].hash[:]) < 0 })
	var ix bytes.Buffer
	ix.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fanout [256]uint32
	for _, e := range entries {
		for b := int(e.hash[0]); b < 256; b++ {
			fanout[b]++
		}
	}
	_ = binary.Write(&ix, binary.BigEndian, fanout)
	for _, e := range entries {
		ix.Write(e.hash[:])
	}
	for _, e := range entries {
		_ = binary.Write(&ix, binary.BigEndian, e.crc)
	}
	var large []uint64
	for _, e := range entries {
		off := uint32(e.offset)
		if e.offset >= 1<<31 {
			off = 1<<31 | uint32(len(large))
			large = append(large, e.offset)
		}
		_ = binary.Write(&ix, binary.BigEndian, off)
	}
	for _, off := range large {
		_ = binary.Write(&ix, binary.BigEndian, off)
	}
	ix.Write(packSum[:])
	idxSum := sha1.Sum(ix.Bytes())
	ix.Write(idxSum[:])
	if len(objs) == 0 {
		return nil, nil, "", errors.New("no objects")
	}
	return buf.Bytes(), ix.Bytes(), fmt.Sprintf("%x", packSum), nil
}
