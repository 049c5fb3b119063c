# Developer tasks. `make help` lists them.
REDIS_PORT ?= 16379
REDIS_URL  ?= redis://127.0.0.1:$(REDIS_PORT)/0

.PHONY: help build test test-redis ci bench bounded release-snapshot release-check docs clean

help:            ## list the tasks
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build:           ## build ./chatq (static: it starts faster than a cgo build)
	CGO_ENABLED=0 go build -o chatq .

test:            ## the tests on the embedded server (no Redis needed)
	go test ./...

test-redis:      ## the tests with -race on a real redis-server at REDIS_URL
	CHATQ_TEST_REDIS_URL=$(REDIS_URL) CHATQ_REQUIRE_REDIS=1 go test -race ./...

ci:              ## what CI runs: starts its own redis-server (installs it if missing)
	bash .ci/run

bench:           ## Go benchmarks against a real redis-server at REDIS_URL
	CHATQ_TEST_REDIS_URL=$(REDIS_URL) go test -run '^$$' -bench . -benchmem ./pkg/...

bounded:         ## every command's worst server time per call at 1e3, 1e5, 1e6 items (starts its own redis-server)
	bash scripts/bounded.sh

docs:            ## man pages and shell completions into dist-assets/
	go run ./tools/gendocs -out dist-assets

release-check:   ## validate .goreleaser.yaml (needs goreleaser v2)
	goreleaser check

release-snapshot: ## build every archive and package locally into dist/
	goreleaser release --snapshot --clean

clean:           ## remove build outputs
	rm -rf chatq dist dist-assets
