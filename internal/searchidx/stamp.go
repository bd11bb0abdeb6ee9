package searchidx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/memsync/memsync/internal/fsutil"
)

// StampName is the name of the index's stamp in the state dir: which
// index (the length and CRC-32 of the bytes it covers) matches which state
// of the memory file (device, inode, size, modification and change times,
// and a CRC-32 of its last tailCheck bytes). A search whose file is in
// that state reads the index and only the bytes appended after the part it
// covers; in any other state it reads the whole file and checks its CRC.
// memsync's own appends move the stamp along (Appended), under the
// writers' lock, when it named the state before the append. The stamp is
// rewritten in place with one write of stampSize bytes, as the content
// index's stamp is: a torn one does not check out, and costs a full read.
const StampName = "search.stamp"

const (
	stampMagic = "msstamp3"
	stampSize  = 76
	// tailCheck is how many bytes at the end of the file the stamp's
	// CRC-32 covers: a change that keeps size and times (a clock set
	// back, a coarse file system) is still seen there.
	tailCheck = 4096
)

// stamp is what search.stamp holds.
type stamp struct {
	covered, fileCRC uint64 // the index's hCovered and hFileCRC
	dev, ino, size   uint64
	mtime, ctime     int64
	tailCRC          uint64
	// none: the file in this state gets no index (damage, "\r" line
	// ends, both dialects); searches read it whole without trying again.
	none bool
}

// stampOf is s with the state of the memory file fi, open as f.
func stampOf(s stamp, f io.ReaderAt, fi os.FileInfo) (stamp, bool) {
	dev, ino, ok := fsutil.FileID(fi)
	ctime, ok2 := fsutil.ChangeTime(fi)
	if !ok || !ok2 {
		return s, false
	}
	s.dev, s.ino, s.size = dev, ino, uint64(fi.Size())
	s.mtime, s.ctime = fi.ModTime().UnixNano(), ctime
	c, err := tailCRC(f, fi.Size())
	s.tailCRC = uint64(c)
	return s, err == nil
}

// tailCRC is the CRC-32 of the last tailCheck bytes of a file of size bytes.
func tailCRC(f io.ReaderAt, size int64) (uint32, error) {
	b := make([]byte, min(size, tailCheck))
	if _, err := f.ReadAt(b, size-int64(len(b))); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return checksum(b), nil
}

func (s stamp) encode() []byte {
	b := make([]byte, 0, stampSize)
	b = append(b, stampMagic...)
	for _, v := range []uint64{s.covered, s.fileCRC, s.dev, s.ino, s.size, uint64(s.mtime), uint64(s.ctime)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(s.tailCRC))
	none := uint32(0)
	if s.none {
		none = 1
	}
	b = binary.LittleEndian.AppendUint32(b, none)
	return binary.LittleEndian.AppendUint32(b, checksum(b))
}

// readStamp reads the stamp in dir; false when there is none, or it does
// not check out.
func readStamp(dir string) (stamp, bool) {
	f, err := os.OpenFile(filepath.Join(dir, StampName), os.O_RDONLY|fsutil.NoFollow, 0)
	if err != nil {
		return stamp{}, false
	}
	defer func() { _ = f.Close() }()
	b := make([]byte, stampSize+1)
	n, _ := io.ReadFull(f, b)
	fi, err := f.Stat()
	if err != nil || n != stampSize || !bytes.HasPrefix(b, []byte(stampMagic)) ||
		binary.LittleEndian.Uint32(b[stampSize-4:]) != checksum(b[:stampSize-4]) {
		return stamp{}, false
	}
	if uid, ok := fsutil.Owner(fi); !fi.Mode().IsRegular() || ok && uid != os.Getuid() {
		return stamp{}, false
	}
	var v [7]uint64
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[len(stampMagic)+8*i:])
	}
	return stamp{covered: v[0], fileCRC: v[1], dev: v[2], ino: v[3], size: v[4], mtime: int64(v[5]), ctime: int64(v[6]),
		tailCRC: uint64(binary.LittleEndian.Uint32(b[len(stampMagic)+56:])), none: binary.LittleEndian.Uint32(b[len(stampMagic)+60:]) == 1}, true
}

// writeStamp writes s into dir in place, with one write (a cache: no fsync).
func writeStamp(dir string, s stamp, perm os.FileMode) error {
	f, err := fsutil.OpenFile(filepath.Join(dir, StampName), os.O_WRONLY|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(s.encode(), 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Appended moves the stamp in dir along an append to the memory file f,
// from the state before to the state after, when it named the state
// before: the index then still matches the file, with the appended bytes
// after the part it covers. The caller holds the writers' lock. Errors
// only leave the stamp behind (the next search reads the whole file).
func Appended(dir string, f *os.File, before, after os.FileInfo) {
	s, ok := readStamp(dir)
	if !ok || s.none {
		return
	}
	// The stamp named the state before: same file, size and times, and
	// the same last bytes.
	if c, err := tailCRC(f, before.Size()); err != nil || uint64(c) != s.tailCRC || !s.names(before) {
		return
	}
	if next, ok := stampOf(s, f, after); ok {
		_ = writeStamp(dir, next, perm(dir))
	}
}

// names reports whether s names the state fi of the memory file (its tail
// CRC aside).
func (s stamp) names(fi os.FileInfo) bool {
	dev, ino, ok := fsutil.FileID(fi)
	ctime, ok2 := fsutil.ChangeTime(fi)
	return ok && ok2 && s.dev == dev && s.ino == ino && s.size == uint64(fi.Size()) &&
		s.mtime == fi.ModTime().UnixNano() && s.ctime == ctime
}

// perm is the mode of an existing stamp (writeStamp keeps it).
func perm(dir string) os.FileMode {
	if fi, err := os.Lstat(filepath.Join(dir, StampName)); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}
