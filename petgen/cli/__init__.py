"""The `petgen` command line: thin commands that parse options and call one library function."""
