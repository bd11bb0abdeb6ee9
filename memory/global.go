package memory

import (
	"errors"
	"os"
	"path/filepath"
)

// GlobalDir is the memory home of the global layer, shared by all
// repositories of a user: $MEMSYNC_GLOBAL_DIR, else $XDG_DATA_HOME/memsync,
// else ~/.local/share/memsync.
func GlobalDir() (string, error) {
	if d := os.Getenv("MEMSYNC_GLOBAL_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "memsync"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no home folder for the global memory; set MEMSYNC_GLOBAL_DIR to its folder")
	}
	return filepath.Join(home, ".local", "share", "memsync"), nil
}

// OpenGlobalDir creates the global memory home if needed and returns it with
// symlinks resolved, as memfile.Store wants its Home.
func OpenGlobalDir() (string, error) {
	dir, err := GlobalDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(dir)
}
