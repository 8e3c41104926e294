package code

import "strings"

// lang indexes the languages the classifier knows.
type lang int8

const (
	langUnknown lang = iota - 1
	langGo
	langPython
	langJS
	langTS
	langJava
	langC
	langCPP
	langCSharp
	langRust
	langPHP
	langRuby
	langSQL
	langShell
	nLang
)

// langNames are the configuration names; Kind is "CODE_" + upper case.
var langNames = [nLang]string{"go", "python", "javascript", "typescript", "java", "c", "cpp", "csharp", "rust", "php", "ruby", "sql", "shell"}

var langKinds = func() (k [nLang]string) {
	for i, n := range langNames {
		k[i] = "CODE_" + strings.ToUpper(n)
	}
	return k
}()

// langAliases maps fence info strings and configuration spellings to a
// language. Keys are lower case.
var langAliases = map[string]lang{
	"go": langGo, "golang": langGo,
	"python": langPython, "py": langPython, "python3": langPython, "py3": langPython, "ipython": langPython,
	"javascript": langJS, "js": langJS, "jsx": langJS, "node": langJS, "mjs": langJS, "cjs": langJS,
	"typescript": langTS, "ts": langTS, "tsx": langTS,
	"java": langJava,
	"c":    langC, "h": langC,
	"cpp": langCPP, "c++": langCPP, "cc": langCPP, "cxx": langCPP, "hpp": langCPP,
	"csharp": langCSharp, "c#": langCSharp, "cs": langCSharp,
	"rust": langRust, "rs": langRust,
	"php":  langPHP,
	"ruby": langRuby, "rb": langRuby,
	"sql": langSQL, "mysql": langSQL, "postgresql": langSQL, "postgres": langSQL, "psql": langSQL, "sqlite": langSQL, "plsql": langSQL, "tsql": langSQL,
	"shell": langShell, "sh": langShell, "bash": langShell, "zsh": langShell, "console": langShell, "shell-session": langShell, "ksh": langShell,
}

// lookupLang resolves a name case-insensitively without allocating for
// names already in lower case.
func lookupLang(name string) lang {
	if l, ok := langAliases[name]; ok {
		return l
	}
	if l, ok := langAliases[strings.ToLower(name)]; ok {
		return l
	}
	return langUnknown
}

// weight is one language's evidence from a keyword or marker.
type weight struct {
	l lang
	w int8
}

// keywords are identifier tokens, matched case-sensitively (SQL keywords are
// listed in upper case; lower-case "select" is weaker evidence). Words that
// are also common English carry low weights: only their accumulation in a
// region that already looks like code counts. TypeScript and C++ hold only
// what sets them apart from JavaScript and C: their scores are added on top.
var keywords = map[string][]weight{
	// Go
	"func": {{langGo, 3}}, "package": {{langGo, 2}, {langJava, 2}}, "fmt": {{langGo, 3}}, "chan": {{langGo, 3}},
	"defer": {{langGo, 3}}, "nil": {{langGo, 2}, {langRuby, 2}}, "err": {{langGo, 1}}, "iota": {{langGo, 3}},
	"goroutine": {{langGo, 2}}, "fallthrough": {{langGo, 2}},
	// Python
	"def": {{langPython, 3}, {langRuby, 2}}, "elif": {{langPython, 3}, {langShell, 1}}, "self": {{langPython, 2}, {langRuby, 1}, {langRust, 1}},
	"None": {{langPython, 2}, {langRust, 1}}, "True": {{langPython, 2}}, "False": {{langPython, 2}}, "lambda": {{langPython, 2}},
	"__init__": {{langPython, 4}}, "__name__": {{langPython, 4}}, "except": {{langPython, 3}}, "raise": {{langPython, 2}, {langRuby, 1}},
	"len": {{langPython, 2}, {langGo, 1}}, "isinstance": {{langPython, 3}}, "nonlocal": {{langPython, 3}}, "pass": {{langPython, 1}},
	"import": {{langPython, 1}, {langJava, 1}, {langJS, 1}, {langGo, 1}}, "from": {{langPython, 1}, {langJS, 1}},
	"print": {{langPython, 2}, {langRuby, 1}},
	// JavaScript, then what only TypeScript has
	"function": {{langJS, 2}, {langPHP, 1}}, "const": {{langJS, 2}, {langC, 1}, {langRust, 1}}, "let": {{langJS, 2}, {langRust, 1}},
	"var": {{langJS, 2}, {langCSharp, 1}, {langGo, 1}}, "console": {{langJS, 3}}, "document": {{langJS, 2}}, "require": {{langJS, 2}, {langRuby, 2}},
	"undefined": {{langJS, 3}}, "prototype": {{langJS, 3}}, "typeof": {{langJS, 2}}, "exports": {{langJS, 3}}, "async": {{langJS, 1}, {langCSharp, 1}, {langRust, 1}, {langPython, 1}},
	"await": {{langJS, 1}, {langCSharp, 1}, {langPython, 1}}, "null": {{langJS, 1}, {langJava, 1}, {langCSharp, 1}, {langPHP, 1}},
	"interface": {{langTS, 2}, {langGo, 1}, {langJava, 1}, {langCSharp, 1}}, "readonly": {{langTS, 3}, {langCSharp, 1}}, "keyof": {{langTS, 4}},
	"implements": {{langTS, 1}, {langJava, 2}, {langPHP, 1}}, "extends": {{langJava, 2}, {langJS, 1}, {langPHP, 1}},
	// Java
	"public": {{langJava, 2}, {langCSharp, 2}, {langPHP, 1}}, "private": {{langJava, 2}, {langCSharp, 2}, {langPHP, 1}},
	"static": {{langJava, 1}, {langCSharp, 1}, {langC, 1}}, "void": {{langJava, 1}, {langC, 2}, {langCSharp, 1}}, "class": {{langJava, 1}, {langPython, 1}, {langCSharp, 1}, {langPHP, 1}, {langRuby, 1}},
	"System": {{langJava, 2}, {langCSharp, 1}}, "throws": {{langJava, 3}}, "final": {{langJava, 2}}, "boolean": {{langJava, 2}, {langPHP, 1}},
	"String": {{langJava, 2}, {langCSharp, 1}, {langRust, 1}}, "new": {{langJava, 1}, {langJS, 1}, {langCSharp, 1}, {langPHP, 1}},
	// C, then what only C++ has
	"printf": {{langC, 3}}, "malloc": {{langC, 3}}, "sizeof": {{langC, 2}}, "typedef": {{langC, 3}}, "struct": {{langC, 2}, {langGo, 1}, {langRust, 1}},
	"int": {{langC, 2}, {langJava, 1}, {langCSharp, 1}}, "char": {{langC, 2}, {langJava, 1}}, "unsigned": {{langC, 3}}, "NULL": {{langC, 3}}, "stdio": {{langC, 4}}, "stdlib": {{langC, 4}},
	"std": {{langCPP, 4}}, "cout": {{langCPP, 4}}, "endl": {{langCPP, 4}}, "nullptr": {{langCPP, 4}}, "template": {{langCPP, 2}}, "virtual": {{langCPP, 2}, {langCSharp, 1}},
	// C#
	"using": {{langCSharp, 2}, {langCPP, 1}}, "namespace": {{langCSharp, 2}, {langCPP, 2}, {langPHP, 1}}, "Console": {{langCSharp, 4}},
	"foreach": {{langCSharp, 2}, {langPHP, 2}}, "bool": {{langCSharp, 1}, {langCPP, 1}, {langRust, 1}}, "override": {{langCSharp, 2}}, "Task": {{langCSharp, 1}},
	// Rust
	"fn": {{langRust, 4}}, "mut": {{langRust, 4}}, "impl": {{langRust, 4}}, "pub": {{langRust, 3}}, "crate": {{langRust, 3}}, "trait": {{langRust, 3}},
	"Some": {{langRust, 2}}, "Ok": {{langRust, 2}}, "Err": {{langRust, 2}}, "Vec": {{langRust, 3}}, "unwrap": {{langRust, 4}}, "usize": {{langRust, 4}}, "match": {{langRust, 1}},
	// PHP
	"echo": {{langPHP, 1}, {langShell, 2}}, "isset": {{langPHP, 4}}, "require_once": {{langPHP, 4}}, "array": {{langPHP, 1}},
	// Ruby
	"end": {{langRuby, 2}}, "puts": {{langRuby, 4}}, "elsif": {{langRuby, 4}}, "unless": {{langRuby, 2}}, "attr_accessor": {{langRuby, 4}}, "do": {{langRuby, 1}, {langShell, 1}},
	// SQL
	"SELECT": {{langSQL, 3}}, "FROM": {{langSQL, 2}}, "WHERE": {{langSQL, 2}}, "INSERT": {{langSQL, 3}}, "INTO": {{langSQL, 2}}, "UPDATE": {{langSQL, 2}},
	"DELETE": {{langSQL, 2}}, "JOIN": {{langSQL, 3}}, "GROUP": {{langSQL, 1}}, "ORDER": {{langSQL, 1}}, "BY": {{langSQL, 1}}, "CREATE": {{langSQL, 2}},
	"TABLE": {{langSQL, 2}}, "VALUES": {{langSQL, 3}}, "PRIMARY": {{langSQL, 2}}, "DROP": {{langSQL, 2}}, "select": {{langSQL, 1}}, "where": {{langSQL, 1}},
	// Shell
	"fi": {{langShell, 4}}, "then": {{langShell, 2}}, "done": {{langShell, 2}}, "esac": {{langShell, 4}}, "sudo": {{langShell, 4}}, "grep": {{langShell, 3}},
	"cd": {{langShell, 3}}, "ls": {{langShell, 2}}, "export": {{langShell, 1}, {langJS, 1}}, "chmod": {{langShell, 4}}, "mkdir": {{langShell, 3}}, "rm": {{langShell, 2}},
	"curl": {{langShell, 3}}, "wget": {{langShell, 3}}, "apt": {{langShell, 3}}, "npm": {{langShell, 2}}, "pip": {{langShell, 2}}, "docker": {{langShell, 2}}, "bash": {{langShell, 2}},
}

// markers are substrings, searched only inside a region already judged to
// be code, that settle what keywords leave open.
var markers = []struct {
	s string
	w []weight
}{
	{":=", []weight{{langGo, 3}}},
	{"fmt.", []weight{{langGo, 3}}},
	{"self.", []weight{{langPython, 3}}},
	{"console.log", []weight{{langJS, 4}}},
	{"===", []weight{{langJS, 2}, {langPHP, 1}}},
	{"=>", []weight{{langJS, 1}, {langCSharp, 1}, {langPHP, 1}}},
	{": string", []weight{{langTS, 3}}},
	{": number", []weight{{langTS, 3}}},
	{"System.out.", []weight{{langJava, 5}}},
	{"@Override", []weight{{langJava, 4}}},
	{"std::", []weight{{langCPP, 4}}},
	{"#include", []weight{{langC, 4}}},
	{"<?php", []weight{{langPHP, 8}}},
	{"$this->", []weight{{langPHP, 5}}},
	{"->", []weight{{langC, 1}, {langPHP, 1}, {langRust, 1}}},
	{"::", []weight{{langRust, 1}, {langPHP, 1}}},
	{"println!", []weight{{langRust, 5}}},
	{"&mut ", []weight{{langRust, 4}}},
	{"Console.Write", []weight{{langCSharp, 5}}},
	{"using System", []weight{{langCSharp, 5}}},
	{"$(", []weight{{langShell, 2}}},
	{"#!/bin/", []weight{{langShell, 6}}},
	{"#!/usr/bin/env bash", []weight{{langShell, 6}}},
	{"#!/usr/bin/env python", []weight{{langPython, 6}}},
	{"#!/usr/bin/env node", []weight{{langJS, 6}}},
	{"#!/usr/bin/env ruby", []weight{{langRuby, 6}}},
}

// classify guesses the language of a code region; langUnknown when the
// evidence is too thin.
func classify(s string) lang {
	var score [nLang]int
	for i := 0; i < len(s); {
		c := s[i]
		if !isIdent(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isIdent(s[j]) {
			j++
		}
		for _, w := range keywords[s[i:j]] {
			score[w.l] += int(w.w)
		}
		i = j
	}
	for _, m := range markers {
		if strings.Contains(s, m.s) {
			for _, w := range m.w {
				score[w.l] += int(w.w)
			}
		}
	}
	// TypeScript is JavaScript plus types; C++ is C plus classes: the
	// specific score is added to the general one so that plain JavaScript
	// or C (specific score 0) wins the tie below.
	score[langTS] += score[langJS]
	score[langCPP] += score[langC]
	best, second := langUnknown, 0
	bestScore := 0
	for l := range nLang {
		switch {
		case score[l] > bestScore:
			second, bestScore, best = bestScore, score[l], l
		case score[l] > second:
			second = score[l]
		}
	}
	// Weak or ambiguous evidence: call it code without naming a language.
	if bestScore < 3 || bestScore == second && best != langJS && best != langC {
		return langUnknown
	}
	return best
}

func isIdent(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
