package fsutil

import (
	"fmt"
	"io"
	"os"
)

// TooLargeError is ReadFile's error for a file over its limit.
type TooLargeError struct {
	Path        string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, larger than the %d bytes read here", e.Path, e.Size, e.Limit)
}

// ReadFile reads the regular file at path (a symlink to one is followed) of
// at most limit bytes. Anything else (a pipe, which would block the read
// until someone writes to it; a device such as /dev/zero, which never ends;
// a folder) is an error naming path, found before the file is opened.
func ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{path, fi.Size(), limit}
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
