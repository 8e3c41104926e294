// Package jsonl reads JSON Lines files. It imports nothing but the standard
// library, so that the scanners' training code can use it without pulling
// test helpers into the gateway's binary.
package jsonl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// Read decodes every non-empty line of a JSON Lines file into a new T.
func Read[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var row T
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}
