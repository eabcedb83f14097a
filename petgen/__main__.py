from petgen.cli.main import main

main()
