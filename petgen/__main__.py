from petgen.cli import main

main()
