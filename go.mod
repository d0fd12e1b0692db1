module github.com/tilego/tilego

go 1.26.8

require github.com/ebitengine/purego v0.11.3
