#!/bin/sh
apt-get update
apt-get install -y nginx
