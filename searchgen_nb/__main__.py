from searchgen_nb.launch import main

if __name__ == "__main__":
    main()
