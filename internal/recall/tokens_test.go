package recall

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"max_conns", []string{"max_con", "max", "con"}}, // conns -> conn -> con (undoubled)
		{"retry-after", []string{"retry-after", "retr", "after"}},
		{"useFeatureFlag", []string{"usefeatureflag", "us", "featur", "flag"}},
		{"HTTPServer", []string{"httpserver", "http", "server"}},
		{"my_featureFlag", []string{"my_featureflag", "my", "featureflag", "featur", "flag"}},
		{"v2 413", []string{"v2", "413"}},
		{"v2Api", []string{"v2api", "v2", "api"}},
		{"Hello, World!", []string{"hello", "world"}},
		{"_private --flag trailing-", []string{"privat", "flag", "trail"}},
		{"a__b", []string{"a__b", "a", "b"}},
		{"", nil},
		{"  ...  ", nil},
		{"Ⓚ ⓚ 🚀", []string{"ⓚ", "ⓚ", "🚀"}}, // symbols with case match either
		// stems: inflections meet
		{"cache caches cached caching", []string{"cach", "cach", "cach", "cach"}},
		{"retry retries retried retrying", []string{"retr", "retr", "retr", "retr"}},
		{"connect connection connections connected", []string{"connect", "connect", "connect", "connect"}},
		{"stop stops stopped stopping", []string{"stop", "stop", "stop", "stop"}},
		{"class classes", []string{"clas", "clas"}},
		{"use used uses using", []string{"us", "us", "us", "us"}},
		{"key keys", []string{"key", "key"}},
		// short and vowel-less words are left alone
		{"is the string things 10ms", []string{"is", "the", "string", "thing", "10ms"}},
		// unicode
		{"ÉCOLE école", []string{"écol", "écol"}},
		{"Straße", []string{"straß"}},
		{"キャッシュ", []string{"キ", "キャ", "ャ", "ャッ", "ッ", "ッシ", "シ", "シュ", "ュ"}},
		{"猫", []string{"猫"}},
		{"Redisのキャッシュ", []string{"redi", "の", "のキ", "キ", "キャ", "ャ", "ャッ", "ッ", "ッシ", "シ", "シュ", "ュ"}},
		{"deploy 🚀 done", []string{"deploy", "🚀", "don"}},
		{"Привет Мир", []string{"привет", "мир"}},
		{"bad\xffbyte", []string{"bad", "byt"}},
	}
	for _, tc := range tests {
		if got := Tokens(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestTokensMatchEachOther checks that words meant to find each other do.
func TestTokensMatchEachOther(t *testing.T) {
	groups := [][]string{
		{"cache", "caches", "cached", "caching", "Caching"},
		{"policy", "policies"},
		{"copy", "copies", "copied", "copying"},
		{"conn", "conns", "Conn"},
		{"add", "adds", "added", "adding"},
		{"fix", "fixes", "fixed", "fixing"},
		{"migrate", "migrated", "migrating", "migration"},
		{"run", "runs", "running"},
		{"deploy", "deploys", "deployed", "deploying"},
	}
	for _, g := range groups {
		want := Tokens(g[0])
		for _, w := range g[1:] {
			if got := Tokens(w); !slices.Equal(got, want) {
				t.Errorf("Tokens(%q) = %q, want %q like %q", w, got, want, g[0])
			}
		}
	}
}

func TestContainsFold(t *testing.T) {
	tests := []struct {
		s, needle string
		want      bool
	}{
		{"Max_Conns here", "conn", true},
		{"MAX_CONNS", "max_conn", true},
		{"nothing", "conn", false},
		{"co", "conn", false},
		{"xcCONN", "conn", true},
		{"ÉCOLE", "écol", true},
		{"\u212Aelvin", "kelvin", true}, // Kelvin sign lowercases to k
		{"İstanbul", "istanbul", true},  // Go lowercases İ to i
		{"キャッシュ", "ャッ", true},
		{"école", "ecol", false},
	}
	for _, tc := range tests {
		if got := containsFold(tc.s, tc.needle); got != tc.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", tc.s, tc.needle, got, tc.want)
		}
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		"max_conns retry-after useFeatureFlag HTTPServer v2 413",
		"caching cached caches",
		"キャッシュを使う 🚀 Привет",
		"\u212Aelvin İstanbul ǅemal",
		"a--b__c- -d",
		"bad\xff\xfebytes",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Tokens(s) {
			if tok == "" {
				t.Fatalf("Tokens(%q) has an empty token", s)
			}
			if strings.ToLower(tok) != tok {
				t.Fatalf("Tokens(%q) has %q, not lowercase", s, tok)
			}
			if !utf8.ValidString(tok) {
				t.Fatalf("Tokens(%q) has invalid UTF-8 %q", s, tok)
			}
			// What the prefilter in Search relies on.
			if !containsFold(s, tok) {
				t.Fatalf("Tokens(%q) has %q, which containsFold does not find in it", s, tok)
			}
		}
	})
}

// FuzzNeedleIndex: the rarest-byte search finds what bytes.Index finds.
func FuzzNeedleIndex(f *testing.F) {
	f.Add("retry the request", "retri")
	f.Add("timeout timeout", "meo")
	f.Add("aaaa", "")
	f.Add("zz", "zzz")
	f.Add("x\xffq", "\xffq")
	f.Fuzz(func(t *testing.T, s, term string) {
		if got, want := newNeedle(term).index([]byte(s)), strings.Index(s, term); got != want {
			t.Fatalf("index(%q, %q) = %d, want %d", s, term, got, want)
		}
	})
}
