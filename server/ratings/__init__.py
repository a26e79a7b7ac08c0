"""Ratings and leaderboards (issue 19): see server.ratings.model and .update."""
