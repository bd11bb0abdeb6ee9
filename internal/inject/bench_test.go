package inject

import (
	"testing"

	"github.com/memsync/memsync/memfile"
)

// BenchmarkSelect: choosing 2000 tokens of a parsed 10 MB memory.
func BenchmarkSelect(b *testing.B) {
	f := memfile.Parse(memfile.GenerateFile(10<<20, 1))
	b.ResetTimer()
	for range b.N {
		Select(f, Options{Budget: 8000, Query: "Why does the retry loop time out when the cache is cold?"})
	}
}

// BenchmarkParseSelect: what inject does after reading the file.
func BenchmarkParseSelect(b *testing.B) {
	data := memfile.GenerateFile(10<<20, 1)
	b.ResetTimer()
	for range b.N {
		f := memfile.Parse(data)
		Select(f, Options{Budget: 8000, Query: "Why does the retry loop time out when the cache is cold?"})
	}
}

func BenchmarkParse(b *testing.B) {
	data := memfile.GenerateFile(10<<20, 1)
	b.ResetTimer()
	for range b.N {
		memfile.Parse(data)
	}
}
