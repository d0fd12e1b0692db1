package fuzz

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
)

// A fault (an illegal address, a hang) loses the process's CUDA context,
// so the shrinker cannot try a candidate of such a finding in the process
// that found it. Isolated checks each candidate in a new process of the
// tilego command (tilego fuzz --replay FILE), which reads the program
// from FILE and prints its Outcome as JSON.

// SaveProg writes p to path in the form Replay reads.
func SaveProg(path string, p *Prog) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(p); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

// LoadProg reads a program SaveProg wrote.
func LoadProg(path string) (*Prog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Prog
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// Isolated returns a check that runs each program in a new process: cmd
// with args, then the program's file (tilego fuzz --replay ... FILE, the
// same backend and targets as the run that found the fault). A process
// that prints no outcome (it crashed) fails as GPURun with its output.
func Isolated(cmd string, args ...string) func(*Prog) Outcome {
	return func(p *Prog) Outcome {
		f, err := os.CreateTemp("", "tilego-prog-*.gob")
		if err != nil {
			return Outcome{Seed: p.Seed, Kind: GPURun, Msg: err.Error()}
		}
		path := f.Name()
		f.Close()
		defer os.Remove(path)
		if err := SaveProg(path, p); err != nil {
			return Outcome{Seed: p.Seed, Kind: GPURun, Msg: err.Error()}
		}
		out, runErr := exec.Command(cmd, append(args, path)...).Output()
		var o Outcome
		if err := json.Unmarshal(out, &o); err != nil {
			return Outcome{Seed: p.Seed, Kind: GPURun, Msg: fmt.Sprintf("the checking process printed no outcome (%v): %s", runErr, out)}
		}
		return o
	}
}
