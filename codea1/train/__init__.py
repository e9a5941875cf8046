"""codea1.train"""
