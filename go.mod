module github.com/heureka-project/heureka

go 1.26.8

require github.com/prometheus/client_golang v1.25.0 // indirect
