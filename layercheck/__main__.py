from layercheck.cli import main

if __name__ == "__main__":  # a guard, so that worker processes importing it run nothing
    main()
