package auth

import (
	"slices"
	"strings"
	"testing"
)

func TestParseScopes(t *testing.T) {
	tests := []struct {
		in      string
		want    []Scope
		wantErr bool
	}{
		{in: "read", want: []Scope{ScopeRead}},
		{in: "write", want: []Scope{ScopeWrite}},
		{in: "read,write", want: []Scope{ScopeRead, ScopeWrite}},
		{in: "write,read", want: []Scope{ScopeRead, ScopeWrite}},
		{in: " read , write ", want: []Scope{ScopeRead, ScopeWrite}},
		{in: "", wantErr: true},
		{in: "admin", wantErr: true},
		{in: "READ", wantErr: true},
		{in: "read,", wantErr: true},
		{in: ",read", wantErr: true},
		{in: "read,read", wantErr: true},
		{in: "read;write", wantErr: true},
		{in: "read write", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseScopes(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseScopes(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ParseScopes(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if err != nil {
			continue
		}
		if again, err := ParseScopes(FormatScopes(got)); err != nil || !slices.Equal(again, got) {
			t.Errorf("ParseScopes(FormatScopes(%v)) = %v, %v", got, again, err)
		}
	}
}

func TestCheckScopes(t *testing.T) {
	tests := []struct {
		in      []Scope
		want    []Scope
		wantErr bool
	}{
		{in: []Scope{ScopeWrite, ScopeRead, ScopeWrite}, want: []Scope{ScopeRead, ScopeWrite}},
		{in: []Scope{ScopeRead}, want: []Scope{ScopeRead}},
		{in: nil, wantErr: true},
		{in: []Scope{}, wantErr: true},
		{in: []Scope{ScopeRead, "admin"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := checkScopes(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("checkScopes(%v) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPrincipalAllows(t *testing.T) {
	tests := []struct {
		scopes        []Scope
		read, writeOK bool
	}{
		{[]Scope{ScopeRead}, true, false},
		{[]Scope{ScopeWrite}, true, true},
		{[]Scope{ScopeRead, ScopeWrite}, true, true},
		{nil, false, false},
		{[]Scope{"admin"}, false, false},
	}
	for _, tt := range tests {
		p := Principal{Account: "a", KeyID: "key_x", Scopes: tt.scopes}
		if got := p.Allows(ScopeRead); got != tt.read {
			t.Errorf("%v Allows(read) = %v, want %v", tt.scopes, got, tt.read)
		}
		if got := p.Allows(ScopeWrite); got != tt.writeOK {
			t.Errorf("%v Allows(write) = %v, want %v", tt.scopes, got, tt.writeOK)
		}
	}
}

func TestValidateAccount(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"demo", true},
		{"Acme-Corp_2.eu", true},
		{"a", true},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"", false},
		{"acme corp", false},
		{"acme/corp", false},
		{"acme#1", false},
		{"café", false},
		{"acme\n", false},
	}
	for _, tt := range tests {
		if err := validateAccount(tt.name); (err == nil) != tt.ok {
			t.Errorf("validateAccount(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
