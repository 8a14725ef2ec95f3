"""`python -m mltriage.server` starts the language server over stdio."""
from mltriage.lsp import main

main()
