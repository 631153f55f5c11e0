module github.com/heureka-project/heureka/tests/ui

go 1.26.8

require (
	github.com/chromedp/cdproto v0.160.1
	github.com/chromedp/chromedp v0.23.1
	github.com/heureka-project/heureka v0.0.0
)

require github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect

// The server and its packages are this repository's own.
replace github.com/heureka-project/heureka => ../..
