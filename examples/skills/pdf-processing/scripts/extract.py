"""Print the text of each page of a PDF (an example file of the pdf-processing skill)."""

import sys

if __name__ == "__main__":
    print(f"would extract {sys.argv[1:]}")
