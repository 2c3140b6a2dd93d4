"""Entry point of the sample project: python main.py"""

from inventory.cli import main

if __name__ == "__main__":
    main()
