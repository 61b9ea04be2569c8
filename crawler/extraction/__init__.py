"""General rules the crawler's extractor applies to real pages: furniture in the tree, site lines, chapters."""
