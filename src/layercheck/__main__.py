from layercheck.cli import main

__all__: list[str] = []

if __name__ == "__main__":  # a guard, so that worker processes importing it run nothing
    main()
