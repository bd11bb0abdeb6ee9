package embed

import (
	"fmt"
	"io"
	"os"
)

// The largest files this package reads. A model's files are read whole into
// memory at each search, so each is capped well above any real one
// (potion-base-8M: a 30 MB model, a 700 KB tokenizer; the multilingual
// potion models: about 500 MB and 30 MB) and far below what would exhaust a
// machine; the cache is capped at what the widest model's vectors of a
// large memory take.
const (
	maxConfigBytes    = 1 << 20
	maxTokenizerBytes = 128 << 20
	maxModelBytes     = 2 << 30
	maxCacheBytes     = 2 << 30
)

// readFile reads the regular file at path (a symlink to one is followed) of
// at most limit bytes. Anything else (a pipe, which would block the read
// until someone writes to it; a device such as /dev/zero, which never ends;
// a folder) is an error naming path, found before the file is opened.
func readFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, larger than the %d bytes read here", path, fi.Size(), limit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Exactly the size seen: a file that grows meanwhile is read in part
	// (and fails its parse or checksum), never past limit.
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}
