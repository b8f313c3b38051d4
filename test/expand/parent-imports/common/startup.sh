#!/bin/sh
echo starting
