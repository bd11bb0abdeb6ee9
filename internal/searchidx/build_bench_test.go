package searchidx

import (
	"testing"

	"github.com/memsync/memsync/memfile"
)

// BenchmarkBuild: building the index of a memory of 30,000 entries (12 MB),
// what the first search after a rewrite pays.
func BenchmarkBuild(b *testing.B) {
	data := memfile.GenerateFile(12_320_000, 1)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, ok := Build(data); !ok {
			b.Fatal("no index")
		}
	}
}

// BenchmarkBuildFrom: the index of that memory built again after one entry
// was deleted, from the index before (what the first search after a delete
// pays).
func BenchmarkBuildFrom(b *testing.B) {
	data := memfile.GenerateFile(12_320_000, 1)
	raw, _ := Build(data)
	old, err := Decode(raw, data)
	if err != nil {
		b.Fatal(err)
	}
	f := memfile.Parse(data)
	f.Entries = f.Entries[1:]
	next := f.Render()
	b.SetBytes(int64(len(next)))
	for b.Loop() {
		if _, ok := BuildFrom(old, next); !ok {
			b.Fatal("no index")
		}
	}
}

// BenchmarkBuildFromSync: the index of a memory of about 1,200 entries
// (400 KB) built again after what a sync does to it: its oldest 200
// entries archived and about 200 new ones appended.
func BenchmarkBuildFromSync(b *testing.B) {
	data := memfile.GenerateFile(400_000, 1)
	raw, _ := Build(data)
	old, err := Decode(raw, data)
	if err != nil {
		b.Fatal(err)
	}
	f := memfile.Parse(data)
	f.Entries = append(f.Entries[200:], memfile.Parse(memfile.GenerateFile(66_000, 5)).Entries...)
	next := f.Render()
	b.SetBytes(int64(len(next)))
	for b.Loop() {
		if _, ok := BuildFrom(old, next); !ok {
			b.Fatal("no index")
		}
	}
}
