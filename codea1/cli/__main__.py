from codea1.cli import main

raise SystemExit(main())
