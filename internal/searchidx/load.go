package searchidx

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/memsync/memsync/internal/fsutil"
)

// Load returns the search index of the memory file f, open under the
// readers' lock, from the state dir dir: the index saved there when it
// matches f, else one built from f now and saved (with perm and dirPerm
// for new files and folders; a state dir that cannot be written only
// costs the next search the same work). It returns nil for a file that
// gets no index. The Index reads f until Close; the caller keeps the
// lock until then.
func Load(dir string, f *os.File, perm, dirPerm os.FileMode) (*Index, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	base, err := openBase(filepath.Join(dir, FileName), maxIndex(size))
	if err != nil {
		base = nil
	}
	st, stamped := readStamp(dir)
	if stamped && st.none && st.names(fi) {
		if c, err := tailCRC(f, size); err == nil && uint64(c) == st.tailCRC {
			if base != nil {
				_ = base.Close()
			}
			return nil, nil // as found before: no index for this file
		}
	}
	if base != nil && stamped && st.covered == base.h[hCovered] && st.fileCRC == base.h[hFileCRC] &&
		st.names(fi) && size >= int64(st.covered) {
		// The file is in the state the stamp names: the bytes the index
		// covers are as they were; read the rest only.
		if c, err := tailCRC(f, size); err == nil && uint64(c) == st.tailCRC {
			tail := make([]byte, size-int64(st.covered))
			if _, err := f.ReadAt(tail, int64(st.covered)); err == nil || errors.Is(err, io.EOF) && len(tail) == 0 {
				if base.attach(f, tail) == nil && !base.Stale() {
					return base, nil
				}
			}
		}
		_ = base.Close()
		base, err = openBase(filepath.Join(dir, FileName), maxIndex(size))
		if err != nil {
			base = nil
		}
	}
	// In any other state: the whole file, checked against the index.
	if size >= 1<<31 {
		if base != nil {
			_ = base.Close()
		}
		return nil, nil
	}
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil && (!errors.Is(err, io.EOF) || size != 0) {
		if base != nil {
			_ = base.Close()
		}
		return nil, err
	}
	if base != nil && base.covers(data) && base.attach(bytes.NewReader(data), data[base.h[hCovered]:]) == nil && !base.Stale() {
		if s, ok := stampOf(stamp{covered: base.h[hCovered], fileCRC: base.h[hFileCRC]}, bytes.NewReader(data), fi); ok {
			_ = writeStamp(dir, s, perm) // the next search reads the appended bytes only
		}
		return base, nil
	}
	// Built again: the entries the old index holds as they are keep their
	// counted terms (BuildFrom).
	raw, ok := BuildFrom(base, data)
	if base != nil {
		_ = base.Close()
	}
	if !ok {
		// Say so, so that the next searches of the file in this state do
		// not try again.
		if s, ok := stampOf(stamp{none: true}, bytes.NewReader(data), fi); ok && fsutil.MkdirAll(dir, dirPerm) == nil {
			_ = writeStamp(dir, s, perm)
		}
		return nil, nil
	}
	if Save(dir, raw, perm, dirPerm) == nil {
		if s, ok := stampOf(stamp{covered: uint64(len(data)), fileCRC: uint64(checksum(data))}, bytes.NewReader(data), fi); ok {
			_ = writeStamp(dir, s, perm)
		}
	}
	return Decode(raw, data)
}

// Changed brings the index in dir up to date with the memory file f, which
// a write just changed (a rewrite, a rollback, a repair; an append moved
// the stamp already), under the writers' lock: the entries it still holds
// as they were keep their counted terms (BuildFrom). A memory never
// searched (no index) gets none; errors leave the index to the next search.
func Changed(dir string, f *os.File, perm, dirPerm os.FileMode) {
	if _, err := os.Lstat(filepath.Join(dir, FileName)); err != nil {
		return
	}
	if fi, err := f.Stat(); err == nil {
		if s, ok := readStamp(dir); ok && !s.none && s.names(fi) {
			return // the stamp follows the file already
		}
	}
	if ix, err := Load(dir, f, perm, dirPerm); err == nil && ix != nil {
		_ = ix.Close()
	}
}
