package fsutil

import "testing"

// SetUmask makes the umask memsync's modes assume mask until the test ends
// (for the tests outside the package: they compare with git's modes).
func SetUmask(t testing.TB, mask int) {
	saved := umask
	t.Cleanup(func() { umask = saved })
	umask = mask
}
