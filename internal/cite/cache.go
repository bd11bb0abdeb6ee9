package cite

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
)

// maxCache is how many findings the cache keeps; past it the oldest go.
const maxCache = 50000

// Cache keeps what Check found of a citation in a file, by the file's blob
// ID: a file git saw unchanged (its index entry says so) is not read again.
// A nil *Cache keeps nothing.
type Cache struct {
	path    string
	entries map[cacheKey]cacheVal
	order   []cacheKey // oldest first
	changed bool
}

type cacheKey struct {
	blob       string
	start, end int
	sum        string
}

type cacheVal struct{ at, lines int }

// OpenCache reads the cache kept at path (none yet is an empty cache; a
// damaged line is skipped).
func OpenCache(path string) *Cache {
	c := &Cache{path: path, entries: map[cacheKey]cacheVal{}}
	b, err := fsutil.ReadFile(path, 64<<20)
	if err != nil {
		return c
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 6 {
			continue
		}
		var n [4]int
		ok := true
		for i, s := range []string{f[1], f[2], f[4], f[5]} {
			if n[i], err = strconv.Atoi(s); err != nil {
				ok = false
			}
		}
		if ok {
			c.add(cacheKey{blob: f[0], start: n[0], end: n[1], sum: f[3]}, cacheVal{at: n[2], lines: n[3]})
		}
	}
	return c
}

func (c *Cache) add(k cacheKey, v cacheVal) {
	if _, ok := c.entries[k]; !ok {
		c.order = append(c.order, k)
	}
	c.entries[k] = v
}

func (c *Cache) get(k cacheKey) (cacheVal, bool) {
	if c == nil {
		return cacheVal{}, false
	}
	v, ok := c.entries[k]
	return v, ok
}

func (c *Cache) put(k cacheKey, v cacheVal) {
	if c == nil {
		return
	}
	c.add(k, v)
	c.changed = true
}

// Save writes the cache back if Check added to it, keeping the newest
// maxCache findings.
func (c *Cache) Save(perm os.FileMode) error {
	if c == nil || !c.changed {
		return nil
	}
	keep := c.order[max(0, len(c.order)-maxCache):]
	var b bytes.Buffer
	for _, k := range keep {
		v := c.entries[k]
		fmt.Fprintf(&b, "%s %d %d %s %d %d\n", k.blob, k.start, k.end, k.sum, v.at, v.lines)
	}
	if err := fsutil.WriteCache(c.path, b.Bytes(), perm); err != nil {
		return err
	}
	c.changed = false
	return nil
}
