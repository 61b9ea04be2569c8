"""The Celery tasks' names.

They are part of the contract with a running deployment: routing rules, beat schedule
entries and messages already in a queue name the tasks `tracker.tasks.*`, so the names
stay as they are wherever the code that sends or runs the tasks lives. The app
(tracker.workers.app), the senders (tracker.workers.queue) and the tasks
(tracker.workers.tasks) all take them from here, so none of them needs to import another for a name.
"""
from __future__ import annotations

PROCESS_PAGE = "tracker.tasks.process_page"
PROCESS_IMAGE = "tracker.tasks.process_image"
READ_PICTURE = "tracker.tasks.read_picture"
REGISTER_CHAPTER = "tracker.tasks.register_chapter"
REINDEX = "tracker.tasks.reindex"
DAILY = "tracker.tasks.daily"
FOLLOWUP = "tracker.tasks.followup"
SCHEDULED_CRAWLS = "tracker.tasks.scheduled_crawls"

#: Every task, for settings that apply to all of them (max_retries from FPT_MAX_ATTEMPTS).
ALL = (PROCESS_PAGE, PROCESS_IMAGE, READ_PICTURE, REGISTER_CHAPTER, REINDEX, DAILY, FOLLOWUP, SCHEDULED_CRAWLS)

#: The queue tasks go to and workers read, unless the Celery settings say otherwise.
DEFAULT_QUEUE = "fptrack"
