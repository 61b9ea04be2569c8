"""The Scrapy project that finds reposted chapters and hands pages to the tracker."""
