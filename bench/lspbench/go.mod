module github.com/ioh-lsp/ioh-lsp/bench/lspbench

go 1.26.0
