module github.com/heureka-project/heureka/tests/nemesis

go 1.26.8

replace github.com/heureka-project/heureka => ../..

require github.com/heureka-project/heureka v0.0.0

require golang.org/x/sys v0.50.0 // indirect
