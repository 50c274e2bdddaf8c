from mathindex.cli import main

raise SystemExit(main())
